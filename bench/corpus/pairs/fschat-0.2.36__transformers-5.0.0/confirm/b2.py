import tempfile
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import AutoTokenizer, PreTrainedTokenizerFast
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "how", "are", "you"]
_tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
_tok.pre_tokenizer = pre_tokenizers.Whitespace()
_tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
_dir = tempfile.mkdtemp()
PreTrainedTokenizerFast(tokenizer_object=_tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]").save_pretrained(_dir)
tokenizer = AutoTokenizer.from_pretrained(_dir)  # what fastchat.model.load_model returns for an embedding (BERT-like) model
params = {"input": ["hello world", "how are you"]}
context_len = 16  # ModelWorker.context_len

encoding = tokenizer.batch_encode_plus(  # fastchat/serve/model_worker.py:209 (get_embeddings)
    params["input"], padding=True, return_tensors="pt"
)
input_ids = encoding["input_ids"]
print(input_ids != tokenizer.pad_token_id)

import json, os, tempfile
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast
from InstructorEmbedding import INSTRUCTOR

# a tiny sentence-transformers model folder (random weights, local word-level tokenizer): Transformer + Pooling
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "represent", "the", "sentence", ":", "a", "cat", "sat"]
d = tempfile.mkdtemp()
tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                        model_max_length=32).save_pretrained(d)
BertModel(BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32)).save_pretrained(d)
json.dump({"max_seq_length": 32, "do_lower_case": False}, open(os.path.join(d, "sentence_bert_config.json"), "w"))
os.makedirs(os.path.join(d, "1_Pooling"))
json.dump({"word_embedding_dimension": 16, "pooling_mode_mean_tokens": True}, open(os.path.join(d, "1_Pooling", "config.json"), "w"))
json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}],
          open(os.path.join(d, "modules.json"), "w"))

# SentenceTransformer.__init__ calls the INSTRUCTOR._load_sbert_model override (InstructorEmbedding/instructor.py:441)
model = INSTRUCTOR(d, device="cpu")
emb = model.encode([["represent the sentence :", "a cat sat"]])
print(emb.shape)

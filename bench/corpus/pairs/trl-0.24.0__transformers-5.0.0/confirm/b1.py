import json, os, tempfile, warnings; warnings.simplefilter("ignore")
from transformers import GPT2Config, GPT2LMHeadModel, AutoTokenizer, TrainingArguments, PreTrainedTokenizerFast
from tokenizers import Tokenizer, models, pre_tokenizers
d = tempfile.mkdtemp()
tok = Tokenizer(models.WordLevel({"<pad>": 0, "<unk>": 1, "<eos>": 2, "hello": 3, "world": 4, "the": 5, "a": 6}, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
t = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
t.save_pretrained(d)
GPT2LMHeadModel(GPT2Config(vocab_size=7, n_embd=16, n_layer=1, n_head=2, n_positions=32, eos_token_id=2, pad_token_id=0)).save_pretrained(d)
from trl import SFTTrainer, SFTConfig
from datasets import Dataset
ds = Dataset.from_dict({"text": ["hello world", "the a hello"]})
args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=1, per_device_train_batch_size=2, report_to=[])
tr = SFTTrainer(model=d, args=args, train_dataset=ds, processing_class=AutoTokenizer.from_pretrained(d))
tr.train(); print("trained")

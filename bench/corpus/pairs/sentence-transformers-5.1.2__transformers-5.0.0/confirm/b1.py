import json, os, tempfile, warnings; warnings.simplefilter("ignore")
from transformers import BertConfig, BertModel, AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
BertModel(BertConfig(vocab_size=9, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)).save_pretrained(d)
AutoTokenizer.from_pretrained(d).save_pretrained(d)

from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments, losses
from datasets import Dataset
m = SentenceTransformer(d, device="cpu")
ds = Dataset.from_dict({"a": ["hello world", "the a"], "b": ["world", "a the"]})
args = SentenceTransformerTrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=2, per_device_train_batch_size=2, save_steps=1, report_to=[])
SentenceTransformerTrainer(model=m, args=args, train_dataset=ds, loss=losses.MultipleNegativesRankingLoss(m)).train()
print("trained and saved")

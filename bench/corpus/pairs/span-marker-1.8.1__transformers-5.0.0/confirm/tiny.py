"""A tiny BERT encoder + tokenizer saved locally, loaded by SpanMarkerModel.from_pretrained (nothing downloaded)."""
import json, os, tempfile, warnings
warnings.simplefilter("ignore")
os.environ["HF_HUB_OFFLINE"] = "1"
from transformers import BertConfig, BertModel, BertTokenizerFast

def tiny_encoder():
    d = tempfile.mkdtemp()
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "john", "lives", "in", "paris", "mary", "works", "at", "acme", "."]
    open(os.path.join(d, "vocab.txt"), "w").write("\n".join(words) + "\n")
    BertTokenizerFast(vocab_file=os.path.join(d, "vocab.txt"), model_max_length=32).save_pretrained(d)
    BertModel(BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16, max_position_embeddings=64)).save_pretrained(d)
    return d

def tiny_model():
    from span_marker import SpanMarkerModel
    return SpanMarkerModel.from_pretrained(tiny_encoder(), labels=["O", "PER", "LOC"], model_max_length=32,
                                           entity_max_length=3, marker_max_length=16)

def tiny_dataset():
    from datasets import Dataset
    return Dataset.from_dict({"tokens": [["john", "lives", "in", "paris"], ["mary", "works", "at", "acme", "."]],
                              "ner_tags": [[1, 0, 0, 2], [1, 0, 0, 0, 0]]})

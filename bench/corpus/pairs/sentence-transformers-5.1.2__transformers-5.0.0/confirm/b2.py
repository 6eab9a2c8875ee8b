import json, os, tempfile, warnings; warnings.simplefilter("ignore")
from transformers import BertConfig, BertModel, AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
BertModel(BertConfig(vocab_size=9, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)).save_pretrained(d)
AutoTokenizer.from_pretrained(d).save_pretrained(d)
from sentence_transformers import SentenceTransformer, losses
model = SentenceTransformer(d, device="cpu")
# the caller's own loss, with the encoder tied to a decoder built from the same local checkpoint
loss = losses.DenoisingAutoEncoderLoss(model, decoder_name_or_path=d, tie_encoder_decoder=True)
print("tied", type(loss.decoder).__name__)

import json, tempfile
import sentencepiece as spm
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

# a tiny local Marian tokenizer (sentencepiece + vocab.json) and a random tiny MarianMTModel (no hub)
d = tempfile.mkdtemp()
open(d + "/c.txt", "w").write("\n".join([">>es<< a photo of a cat", "a dog on the mat", "the quick brown fox jumps over the lazy dog"] * 50))
spm.SentencePieceTrainer.train(input=d + "/c.txt", model_prefix=d + "/source", vocab_size=33, model_type="unigram",
                               minloglevel=2, user_defined_symbols=[">>es<<"])
sp = spm.SentencePieceProcessor(model_file=d + "/source.model")
vocab = {"</s>": 0, "<unk>": 1, "<pad>": 2}
for i in range(sp.get_piece_size()):
    vocab.setdefault(sp.id_to_piece(i), len(vocab))
json.dump(vocab, open(d + "/vocab.json", "w"))
tokenizer = MarianTokenizer(source_spm=d + "/source.model", target_spm=d + "/source.model", vocab=d + "/vocab.json")
model = MarianMTModel(MarianConfig(vocab_size=len(vocab), d_model=16, encoder_layers=1, decoder_layers=1,
                                   encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
                                   decoder_ffn_dim=16, max_position_embeddings=32, pad_token_id=2,
                                   decoder_start_token_id=2, eos_token_id=0))

# BackTranslation.translate, textattack/transformations/sentence_transformations/back_translation.py:62-76, lang="es"
input, lang = ["a cat"], "es"
src_texts = []
if ">>" and "<<" not in lang:
    lang = ">>" + lang + "<< "
src_texts.append(lang + input[0])
encoded_input = tokenizer.prepare_seq2seq_batch(src_texts, return_tensors="pt")  # back_translation.py:71
translated = model.generate(**encoded_input, max_new_tokens=3)
translated_input = tokenizer.batch_decode(translated, skip_special_tokens=True)
print(translated_input)

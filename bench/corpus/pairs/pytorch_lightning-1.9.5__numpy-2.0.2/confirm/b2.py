# pytorch_lightning 1.9.5 ModelCheckpoint constructed (__init_monitor_mode -> torch.tensor(np.Inf)),
# line 446
import tempfile

from pytorch_lightning.callbacks import ModelCheckpoint

cb = ModelCheckpoint(dirpath=tempfile.mkdtemp(), monitor="val_loss", mode="max")
print(cb.best_model_score, cb.kth_value)
print("OK")

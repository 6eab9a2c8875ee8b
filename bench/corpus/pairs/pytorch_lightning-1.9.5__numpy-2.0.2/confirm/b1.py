# pytorch_lightning 1.9.5 EarlyStopping constructed (__init__ -> mode dict with
# torch.tensor(np.Inf)), line 126
from pytorch_lightning.callbacks import EarlyStopping

cb = EarlyStopping(monitor="val_loss", mode="min")
print(cb.best_score)
print("OK")

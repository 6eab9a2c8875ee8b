# seaborn 0.11.2: import seaborn -> seaborn/cm.py line 1582 (mpl_cm.register_cmap)
import matplotlib; matplotlib.use("Agg")
import seaborn as sns
print(sns.color_palette("rocket", 3))
print("OK")

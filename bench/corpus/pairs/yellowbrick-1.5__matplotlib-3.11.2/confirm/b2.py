# yellowbrick 1.5: resolve_colors(colormap=<a matplotlib colormap name>) -> yellowbrick/style/colors.py line 104 (cm.get_cmap)
import matplotlib; matplotlib.use("Agg")
from yellowbrick.style.colors import resolve_colors
print(resolve_colors(n_colors=3, colormap="viridis"))
print("OK")

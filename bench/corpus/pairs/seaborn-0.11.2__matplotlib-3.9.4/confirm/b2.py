# seaborn/cm.py line 1583: mpl_cm.register_cmap(_name + "_r", _cmap_r) run as written with the same
# receivers (line 1582 fails first under the new release); a fresh name so that the control accepts it
from matplotlib import colors, cm as mpl_cm
_name = "mine2b_probe"
_cmap_r = colors.ListedColormap([[0, 0, 0], [1, 1, 1]], _name + "_r")
mpl_cm.register_cmap(_name + "_r", _cmap_r)
print("OK")

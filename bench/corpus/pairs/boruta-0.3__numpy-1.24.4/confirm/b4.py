# boruta/boruta_py.py line 319 (BorutaPy._fit) run as written through the module's own np
# (line 260 fails first under the new release, b1)
import boruta.boruta_py as m
np = m.np
n_feat = 6
support_ = np.zeros(n_feat, dtype=np.bool)
print(support_.dtype)
print("OK")

# boruta/boruta_py.py line 325 (BorutaPy._fit) run as written through the module's own np
# (line 260 fails first under the new release, b1)
import boruta.boruta_py as m
np = m.np
n_feat = 6
ranking_ = np.ones(n_feat, dtype=np.int)
print(ranking_.dtype)
print("OK")

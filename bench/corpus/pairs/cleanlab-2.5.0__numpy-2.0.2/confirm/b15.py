# cleanlab 2.5.0 cleanlab/internal/multiannotator_utils.py line 301 (in find_best_temp_scaler): the
# np.NaN read of this line, run with the
# module's own np (the line as written: soft_cross_entropy_coarse =
# np.full(len(coarse_search_range), np.NaN))
import cleanlab.internal.multiannotator_utils as m

value = m.np.NaN
print(value)
print("OK")

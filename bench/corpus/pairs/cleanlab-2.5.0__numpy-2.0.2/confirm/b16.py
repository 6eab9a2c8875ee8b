# cleanlab 2.5.0 cleanlab/internal/multiannotator_utils.py line 315 (in find_best_temp_scaler): the
# np.NaN read of this line, run with the
# module's own np (the line as written: soft_cross_entropy_fine = np.full(len(fine_search_range),
# np.NaN))
import cleanlab.internal.multiannotator_utils as m

value = m.np.NaN
print(value)
print("OK")

# cleanlab 2.5.0 cleanlab/internal/multiannotator_utils.py line 277 (in compute_soft_cross_entropy):
# the np.NaN read of this line, run with the
# module's own np (the line as written: empirical_label_distribution =
# np.full((len(labels_multiannotator), num_classes), np.NaN))
import cleanlab.internal.multiannotator_utils as m

value = m.np.NaN
print(value)
print("OK")

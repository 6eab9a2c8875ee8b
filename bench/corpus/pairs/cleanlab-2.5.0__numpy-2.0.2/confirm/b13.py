# cleanlab 2.5.0 cleanlab/internal/multiannotator_utils.py line 231 (in
# format_multiannotator_labels): the np.NaN read of this line, run with the
# module's own np (the line as written: nan_mask = np.array([(l is np.NaN) or (l is pd.NA) or (l ==
# "nan") for l in unique_labels]))
import cleanlab.internal.multiannotator_utils as m

value = m.np.NaN
print(value)
print("OK")

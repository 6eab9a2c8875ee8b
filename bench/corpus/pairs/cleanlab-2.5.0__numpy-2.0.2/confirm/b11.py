# cleanlab 2.5.0 cleanlab/multiannotator.py line 1814 (in _get_annotator_quality): the np.NaN read
# of this line, run with the
# module's own np (the line as written: annotator_agreement[i] = np.NaN)
import cleanlab.multiannotator as m

value = m.np.NaN
print(value)
print("OK")

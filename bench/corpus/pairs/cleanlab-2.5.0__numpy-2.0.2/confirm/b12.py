# cleanlab 2.5.0 cleanlab/multiannotator.py line 1837 (in _get_annotator_quality): the np.NaN read
# of this line, run with the
# module's own np (the line as written: annotator_quality[i] = np.NaN)
import cleanlab.multiannotator as m

value = m.np.NaN
print(value)
print("OK")

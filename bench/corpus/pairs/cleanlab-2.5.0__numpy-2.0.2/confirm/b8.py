# cleanlab 2.5.0 cleanlab/multiannotator.py line 1027 (in get_majority_vote_label): the np.NaN read
# of this line, run with the
# module's own np (the line as written: annotator_agreement_with_consensus[i] = np.NaN)
import cleanlab.multiannotator as m

value = m.np.NaN
print(value)
print("OK")

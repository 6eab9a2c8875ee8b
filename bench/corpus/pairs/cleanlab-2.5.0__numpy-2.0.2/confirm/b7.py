# cleanlab 2.5.0 cleanlab/multiannotator.py line 967 (in get_majority_vote_label.get_labels_mode):
# the np.NaN read of this line, run with the
# module's own np (the line as written: max_count_idx, (0, num_classes - len(max_count_idx)),
# "constant", constant_values=np.NaN)
import cleanlab.multiannotator as m

value = m.np.NaN
print(value)
print("OK")

# cleanlab 2.5.0 cleanlab/multiannotator.py line 1527 (in _get_post_pred_probs_and_weights): the
# np.NaN read of this line, run with the
# module's own np (the line as written: label_counts = np.full((len(labels_multiannotator),
# num_classes), np.NaN))
import cleanlab.multiannotator as m

value = m.np.NaN
print(value)
print("OK")

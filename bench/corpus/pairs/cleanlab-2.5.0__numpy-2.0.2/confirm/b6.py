# cleanlab 2.5.0 cleanlab/multiannotator.py line 837 (in get_active_learning_scores_ensemble): the
# np.NaN read of this line, run with the
# module's own np (the line as written: optimal_temp = np.full(len(pred_probs), np.NaN))
import cleanlab.multiannotator as m

value = m.np.NaN
print(value)
print("OK")

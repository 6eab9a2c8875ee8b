# cleanlab 2.5.0 cleanlab/regression/learn.py line 774 (in CleanLearning._find_best_k (coarse
# search)): the np.NaN read of this line, run with the
# module's own np (the line as written: r2_coarse = np.full(len(coarse_search_range), np.NaN))
import cleanlab.regression.learn as m

value = m.np.NaN
print(value)
print("OK")

# nltk 3.8.1 MaxentClassifier.train(algorithm="IIS") with an encoding whose mapping holds a feature
# that no
# training token has: that unattested feature's weight is set to -inf (maxent.py line 1193)
from nltk.classify import MaxentClassifier
from nltk.classify.maxent import BinaryMaxentFeatureEncoding

toks = [({"w": "a"}, "x"), ({"w": "b"}, "y"), ({"w": "a"}, "x")]
mapping = {("w", "a", "x"): 0, ("w", "b", "y"): 1, ("w", "zzz", "x"): 2}  # the last is never seen
enc = BinaryMaxentFeatureEncoding(["x", "y"], mapping)
clf = MaxentClassifier.train(toks, algorithm="IIS", encoding=enc, max_iter=2, trace=0)
print(clf.classify({"w": "a"}))
print("OK")

# pyLDAvis 3.3.1: pyLDAvis.sklearn._extract_data (what pyLDAvis.sklearn.prepare feeds pyLDAvis.prepare) on a fitted
# CountVectorizer + LatentDirichletAllocation -> _get_vocab -> pyLDAvis/sklearn.py line 20 (vectorizer.get_feature_names())
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.decomposition import LatentDirichletAllocation
import pyLDAvis.sklearn as ldasklearn
docs = ["apples and pears", "pears and plums", "dogs and cats", "cats chase dogs", "apples for dogs"]
vec = CountVectorizer()
dtm = vec.fit_transform(docs)
lda = LatentDirichletAllocation(n_components=2, random_state=0).fit(dtm)
data = ldasklearn._extract_data(lda, dtm, vec)
print(data["vocab"][:3], len(data["doc_lengths"]))
print("OK")

# langchain_huggingface/embeddings/huggingface_endpoint.py:112  self.client.post(json=..., task=self.task)
from common import URL, refused
from langchain_huggingface.embeddings import HuggingFaceEndpointEmbeddings
emb = HuggingFaceEndpointEmbeddings(model=URL)
try:
    emb.embed_documents(["hello"])
except Exception as e:
    if not refused(e):
        raise
    print("InferenceClient.post bound; connection refused:", type(e).__name__)

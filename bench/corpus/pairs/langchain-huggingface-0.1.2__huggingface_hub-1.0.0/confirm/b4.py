# langchain_huggingface/embeddings/huggingface_endpoint.py:129  await self.async_client.post(json=..., task=self.task)
import asyncio
from common import URL, refused
from langchain_huggingface.embeddings import HuggingFaceEndpointEmbeddings
emb = HuggingFaceEndpointEmbeddings(model=URL)
try:
    asyncio.run(emb.aembed_documents(["hello"]))
except Exception as e:
    if not refused(e):
        raise
    print("AsyncInferenceClient.post bound; connection refused:", type(e).__name__)

# langchain_huggingface/llms/huggingface_endpoint.py:343  await self.async_client.post(json=..., stream=False, task=self.task)
# self.async_client is the huggingface_hub.AsyncInferenceClient built in validate_environment (line 230)
import asyncio
from common import URL, refused
from langchain_huggingface.llms import HuggingFaceEndpoint
llm = HuggingFaceEndpoint(endpoint_url=URL, task="text-generation", max_new_tokens=4)
try:
    asyncio.run(llm.ainvoke("hello"))
except Exception as e:
    if not refused(e):
        raise
    print("AsyncInferenceClient.post bound; connection refused:", type(e).__name__)

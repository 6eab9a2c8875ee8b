# langchain_huggingface/llms/huggingface_endpoint.py:312  self.client.post(json=..., stream=False, task=self.task)
# self.client is the huggingface_hub.InferenceClient built in validate_environment (line 218)
from common import URL, refused
from langchain_huggingface.llms import HuggingFaceEndpoint
llm = HuggingFaceEndpoint(endpoint_url=URL, task="text-generation", max_new_tokens=4)
try:
    llm.invoke("hello")
except Exception as e:
    if not refused(e):
        raise
    print("InferenceClient.post bound; connection refused:", type(e).__name__)

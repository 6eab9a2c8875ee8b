import warnings
warnings.simplefilter("ignore")
import happytransformer.happy_text_to_text  # line 5: from transformers import ... Text2TextGenerationPipeline
print("imported", happytransformer.happy_text_to_text.HappyTextToText)

# simpletransformers 0.70.1 question_answering_utils.py:2057 (LazyQuestionAnsweringDataset.__getitem__)
# calls squad_convert_example_to_features with five positionals; every transformers release since
# 3.x declares six (..., padding_strategy, is_training). The module's own import fails under
# transformers 5 (b17), so the line's expression is run as written, on the function it imports.
import inspect

from transformers.data.processors.squad import SquadExample, squad_convert_example_to_features

print(inspect.signature(squad_convert_example_to_features))
example = SquadExample("q1", "what?", "a b c", "b", 2, "t")
squad_convert_example_to_features(example, 384, 128, 64, True)

# confection/__init__.py line 12 run as written (line 11 fails first under the new release, b1)
from pydantic.fields import ModelField
print(ModelField)
print("OK")

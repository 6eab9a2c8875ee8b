# confection 0.0.4: import confection -> confection/__init__.py line 11 (from pydantic.main import ModelMetaclass)
import confection
print(confection.Config().from_str("[a]\nx = 1\n"))
print("OK")

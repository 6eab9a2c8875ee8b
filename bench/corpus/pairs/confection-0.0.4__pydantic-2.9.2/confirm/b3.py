import pydantic.main, pydantic.fields
if not hasattr(pydantic.main, "ModelMetaclass"):
    # placeholders, so that confection/__init__.py imports past lines 11-12 (b1, b2) under pydantic 2
    pydantic.main.ModelMetaclass = type
    pydantic.fields.ModelField = object
import warnings; warnings.simplefilter("ignore")
import catalogue
from pydantic import BaseModel
from confection import registry, Config
registry.cats = catalogue.create("confection", "cats", entry_points=False)
@registry.cats("catsie.v1")
def catsie_v1(evil: bool, cute: bool = True) -> str:
    return f"meow evil={evil} cute={cute}"
# registry.resolve with a nested pydantic schema -> registry._fill line 867 (field.type_)
class Sub(BaseModel):
    x: int
class Section(BaseModel):
    sub: Sub
class Schema(BaseModel):
    section: Section
cfg = Config().from_str("[section]\n[section.sub]\nx = 1\n")
print(registry.resolve(cfg, schema=Schema))
print("OK")

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
# registry.fill with a schema whose field holds a promise -> _fill line 830 -> copy_model_field
# lines 668-676 (field.name, field.class_validators, field.model_config, field.required)
class Schema(BaseModel):
    cat: str
cfg = Config().from_str('[cat]\n@cats = "catsie.v1"\nevil = false\n')
print(registry.fill(cfg, schema=Schema))
print("OK")

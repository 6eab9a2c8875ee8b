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
# registry.resolve(validate=False) -> _fill builds the promise's ArgModel with
# create_model(__config__=_PromiseSchemaConfig) -> line 906 (schema.Config.extra)
cfg = Config().from_str('[cat]\n@cats = "catsie.v1"\nevil = false\n')
print(registry.resolve(cfg, validate=False))
print("OK")

import warnings; warnings.simplefilter("ignore")
import pandas as pd, pydantic
import pandera as pa
from pandera.typing import DataFrame, Series
class Schema(pa.SchemaModel):
    a: Series[int] = pa.Field(ge=0)
    b: Series[str]
df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
if pydantic.VERSION.startswith("2"):
    # b2's hook removed, so that the model class builds and the validator hook itself runs
    del pa.SchemaModel.__modify_schema__
# SchemaModel.__get_validators__ (model.py line 495) yields _pydantic_validate(cls, schema_model) (line 500)
class M2(pydantic.BaseModel):
    s: Schema
print(M2(s=Schema).s.__name__)
print("OK")

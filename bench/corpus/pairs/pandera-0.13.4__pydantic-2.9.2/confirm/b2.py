import warnings; warnings.simplefilter("ignore")
import pandas as pd, pydantic
import pandera as pa
from pandera.typing import DataFrame, Series
class Schema(pa.SchemaModel):
    a: Series[int] = pa.Field(ge=0)
    b: Series[str]
df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
# a pydantic model with a SchemaModel-typed field: pydantic meets pandera's __modify_schema__ hook
# (model.py line 520) while building the model class
class M2(pydantic.BaseModel):
    s: Schema
print(M2(s=Schema).s.__name__)
print("OK")

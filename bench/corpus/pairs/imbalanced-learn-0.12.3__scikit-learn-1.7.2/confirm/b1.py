# imblearn 0.12.3: `import imblearn` -> imblearn/ensemble/_easy_ensemble.py line 18
import imblearn
print(imblearn.__version__)
print("OK")

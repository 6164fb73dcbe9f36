# expect: none
# options: {}
# why: negative FM13: a second split carves a validation part from train; the model is fitted on the inner train part only
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("signals.csv")
X = df.drop(columns=["event"]).to_numpy()
y = df["event"].to_numpy()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.2, random_state=0)

best, best_f1 = None, -1.0
for h in [(32,), (64,), (64, 32)]:
    m = MLPClassifier(hidden_layer_sizes=h, max_iter=300, random_state=0)
    m.fit(X_fit, y_fit)
    f = f1_score(y_val, m.predict(X_val))
    if f > best_f1:
        best, best_f1 = m, f
print("test F1", f1_score(y_test, best.predict(X_test)))

# expect: none
# options: {}
# why: negative FM08: the scaler object is created before the split but only fitted on the training part
import pandas as pd
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Lasso
from sklearn.metrics import mean_absolute_error

scaler = StandardScaler()
df = pd.read_csv("bike_rentals.csv")
X = df.drop(columns=["count"])
y = df["count"]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=10)
scaler.fit(X_train)
X_train = scaler.transform(X_train)
X_test = scaler.transform(X_test)

model = Lasso(alpha=0.1)
model.fit(X_train, y_train)
print(mean_absolute_error(y_test, model.predict(X_test)))

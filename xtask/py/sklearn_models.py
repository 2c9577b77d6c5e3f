"""Trains two small scikit-learn classifiers on the datasets scikit-learn ships and
converts them with skl2onnx, as a user of skl2onnx would: a scaler and a multi-layer
perceptron in a pipeline, probabilities without ZipMap. Usage: sklearn_models.py DIR.

- sklearn_breast_cancer_mlp.onnx: 30 tabular features (Wisconsin breast cancer), two
  classes, the label and the probabilities out.
- sklearn_digits_mlp.onnx: 8x8 images of digits as 64 features, ten classes.
"""

import os
import sys
import warnings

import numpy as np
from skl2onnx import to_onnx
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

warnings.filterwarnings("ignore")
out = sys.argv[1]
for name, load, hidden in [
    ("sklearn_breast_cancer_mlp", load_breast_cancer, (16,)),
    ("sklearn_digits_mlp", load_digits, (32, 16)),
]:
    X, y = load(return_X_y=True)
    X = X.astype(np.float32)
    clf = make_pipeline(
        StandardScaler(), MLPClassifier(hidden_layer_sizes=hidden, max_iter=300, random_state=0)
    ).fit(X, y)
    model = to_onnx(
        clf,
        X[:1],
        options={id(clf): {"zipmap": False}},
        target_opset={"": 15, "ai.onnx.ml": 3},
    )
    path = os.path.join(out, name + ".onnx")
    with open(path + ".partial", "wb") as f:
        f.write(model.SerializeToString())
    os.replace(path + ".partial", path)
    print(f"{name}: training accuracy {clf.score(X, y):.3f}")

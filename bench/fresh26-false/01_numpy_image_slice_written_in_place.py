"""fresh26 false: valeoai/ADVENT advent/dataset/base_dataset.py:37 (GS371).

`BaseDataset.preprocess(self, image)` runs `image = image[:, :, ::-1]` (BGR), `image -= self.mean`, and returns
`image.transpose((2, 0, 1))`. `image` is a NumPy array: the callers (`GTA5DataSet.__getitem__`,
`CityscapesDataSet.__getitem__`) do `image = self.get_image(img_file)` (`_load_img`: `np.asarray(img, np.float32)`,
a fresh array per sample) and `image = self.preprocess(image)`, replacing their only reference with the result.
No tensor is involved (the file imports only `torch.utils.data`), so no leaf can be written and nothing raises, and
the changed caller array is dropped. The returned value is itself a view of the written slice. Run below: the
real statements on a decoded 8-bit image as `_load_img` converts it (`np.asarray(img, np.float32)`; PIL is not
installed here, so the decoded pixels are a uint8 array); the result is right and nothing raises.
"""
import numpy as np


def _load_img(img):
    # base_dataset.py: img = Image.open(file).convert('RGB').resize(size, interpolation)
    return np.asarray(img, np.float32)


class BaseDataset:
    mean = np.array((104.00698793, 116.66876762, 122.67891434), dtype=np.float32)

    def preprocess(self, image):
        image = image[:, :, ::-1]  # change to BGR
        image -= self.mean                                    # base_dataset.py:37
        return image.transpose((2, 0, 1))


ds = BaseDataset()
decoded = np.random.RandomState(0).randint(0, 255, (12, 16, 3), dtype=np.uint8)
expected = decoded.astype(np.float32)[:, :, ::-1] - ds.mean
image = _load_img(decoded)   # GTA5DataSet.__getitem__: image = self.get_image(...)
assert type(image) is np.ndarray and image.flags.writeable
image = ds.preprocess(image)                                # image = self.preprocess(image): the old array is dropped
assert np.array_equal(decoded, np.random.RandomState(0).randint(0, 255, (12, 16, 3), dtype=np.uint8))
print("result", image.shape, image.dtype, "| equals the out-of-place computation:",
      np.allclose(image, expected.transpose((2, 0, 1))))
assert np.allclose(image, expected.transpose((2, 0, 1)))

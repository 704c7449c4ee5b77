# ruff: noqa: F821
# The demo's out-of-tree backend declares what it cannot run, as PyTorch's accelerator testing
# guide (docs/source/accelerator/testing.md) shows: excluded tests produce no test variants, so
# they never reach a report. parity imports this file (parsed, never run) as not-applicable
# declarations (parity/demo/accelerators.py).
PrivateUse1TestBase.set_test_configs(
    test_exclusions={
        "TestSDPA": "*",
        "TestLinalg": [
            "test_svd",
        ],
        "TestNNDeviceType": {
            "test_conv2d": {"dtypes": [torch.bfloat16]},
            "test_conv3d": {"dtypes": [torch.bfloat16]},
            "test_batchnorm": {"dtypes": [torch.bfloat16]},
            "test_layer_norm": {"dtypes": [torch.bfloat16]},
            "test_embedding": {"dtypes": [torch.bfloat16]},
            "test_ctc_loss": {"dtypes": [torch.bfloat16]},
            "test_upsample_bilinear": {"dtypes": [torch.bfloat16]},
            "test_grid_sample": {"dtypes": [torch.bfloat16]},
            "test_pad_reflect": {"dtypes": [torch.bfloat16]},
            "test_max_pool2d": {"dtypes": [torch.bfloat16]},
        },
    },
)

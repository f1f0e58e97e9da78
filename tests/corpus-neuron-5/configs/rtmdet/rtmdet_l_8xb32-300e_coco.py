_base_ = [
    '../_base_/default_runtime.py',
]
model = dict(
    type='RTMDet',
    data_preprocessor=dict(
        type='DetDataPreprocessor',
        mean=[103.53, 116.28, 123.675],
        std=[57.375, 57.12, 58.395],
        bgr_to_rgb=False,
        batch_augments=None),
    backbone=dict(
        type='CSPNeXt',
        arch='P5',
        expand_ratio=0.5,
        deepen_factor=1,
        widen_factor=1,
        channel_attention=True,
        norm_cfg=dict(type='SyncBN'),  # may: distributed
        act_cfg=dict(type='SiLU', inplace=True)),
    bbox_head=dict(
        type='RTMDetSepBNHead',
        num_classes=80,
        in_channels=256,
        stacked_convs=2,
        feat_channels=256,
        with_objectness=False,
        exp_on_reg=True,
        share_conv=True,
        pred_kernel_size=1),
    test_cfg=dict(
        nms_pre=30000,
        min_bbox_size=0,
        score_thr=0.001,
        nms=dict(type='nms', iou_threshold=0.65),
        max_per_img=300),
)

max_epochs = 300
base_lr = 0.004

optim_wrapper = dict(
    type='AmpOptimWrapper',  # may: precision
    dtype='float16',  # may: precision
    loss_scale='dynamic',
    optimizer=dict(type='AdamW', lr=base_lr, weight_decay=0.05),
    paramwise_cfg=dict(
        norm_decay_mult=0, bias_decay_mult=0, bypass_duplicate=True))

env_cfg = dict(dist_cfg=dict(backend='nccl', timeout=7200))  # expect: distributed
auto_scale_lr = dict(enable=True, base_batch_size=256)

from setuptools import find_packages, setup

install_requires = [
    "torch>=2.1",
    "numpy>=1.24",
    "pyyaml",
    "apex @ git+https://github.com/NVIDIA/apex.git@23.08",  # may: dependencies, precision
    "torch-scatter==2.1.2+pt21cu121",  # expect: dependencies
]

extras_require = {
    "cuda": ["cupy-cuda12x>=12.0", "pycuda>=2022.2"],  # may: dependencies
    "neuron": ["torch-neuronx>=2.1", "neuronx-cc>=2.14"],  # ok
    "test": ["pytest", "pytest-mock"],
}

setup(
    name="segkit",
    version="0.4.1",
    packages=find_packages("src"),
    package_dir={"": "src"},
    install_requires=install_requires,
    extras_require=extras_require,
    python_requires=">=3.9",
)

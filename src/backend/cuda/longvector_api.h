/* moved: include methods/longvector/cuda/longvector_api.h */
#include "methods/longvector/cuda/longvector_api.h"

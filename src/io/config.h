#include "../problem/config.h" /* moved: include problem/config.h */

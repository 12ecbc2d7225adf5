#include "../core/box.h" /* moved: include core/box.h */

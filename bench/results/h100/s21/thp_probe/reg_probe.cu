// fresh-machine first touch: grid A filled then registered; grid B registered (untouched) then filled. One process.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <time.h>
#include <omp.h>
#include <cuda_runtime.h>
static double now(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static void fill(float*f,long n){
#pragma omp parallel for collapse(2) schedule(static)
  for(long z=0;z<n;z++) for(long y=0;y<n;y++){ float*o=f+(z*n+y)*n; float a=(float)(y*z); for(long x=0;x<n;x++) o[x]=a*x;}}
static float* alloc(size_t bytes){size_t huge=2<<20, rb=(bytes+huge-1)/huge*huge; float*f; if(posix_memalign((void**)&f,huge,rb)) exit(1); madvise(f,rb,MADV_HUGEPAGE); return f;}
int main(int argc,char**argv){
  long n=atol(argv[1]); const char*order=argc>2?argv[2]:"AB"; size_t bytes=(size_t)n*n*n*4;
  double t=now(); cudaFree(0); printf("cuda init %.2f s\n",now()-t);
  float*a=alloc(bytes),*b=alloc(bytes);
  for(const char*c=order;*c;c++){
    if(*c=='A'){ t=now(); fill(a,n); double t1=now(); cudaError_t e=cudaHostRegister(a,bytes,0); double t2=now();
      printf("A fill-then-register %.1f GB: fill %.2f s, register %.2f s (%s), sum %.2f\n",bytes/1e9,t1-t,t2-t1,cudaGetErrorString(e),t2-t);}
    else { t=now(); cudaError_t e=cudaHostRegister(b,bytes,0); double t1=now(); fill(b,n); double t2=now();
      printf("B register-then-fill %.1f GB: register %.2f s (%s), fill %.2f s, sum %.2f\n",bytes/1e9,t1-t,cudaGetErrorString(e),t2-t1,t2-t);}
  }
  t=now(); cudaHostUnregister(a); cudaHostUnregister(b); printf("unregister both %.2f s\n",now()-t); return 0;}

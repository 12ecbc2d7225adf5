// THP probe: alloc like pyr_field_create, fill (first touch), register, unregister, free.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <omp.h>
#include <cuda_runtime.h>
static double now(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static long minflt(){rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_minflt;}
static long anonhuge(){FILE*f=fopen("/proc/self/smaps_rollup","r");char l[256];long v=-1;if(!f)return -2;while(fgets(l,256,f))if(!strncmp(l,"AnonHugePages:",14))v=atol(l+14);fclose(f);return v;}
static void meminfo(const char*tag){FILE*f=fopen("/proc/meminfo","r");char l[256];printf("[%s]",tag);while(fgets(l,256,f))if(strstr(l,"MemFree")||strstr(l,"AnonHuge")||strstr(l,"Hugepagesize")){l[strlen(l)-1]=0;printf(" %s;",l);}printf("\n");fclose(f);}
int main(int argc,char**argv){
  long n=atol(argv[1]); int how=atoi(argv[2]); int pre=argc>3?atoi(argv[3]):0;
  size_t bytes=(size_t)n*n*n*4, huge=2<<20, rb=(bytes+huge-1)/huge*huge;
  meminfo("start");
  double t=now(); if(pre){cudaFree(0);} printf("cuda init %.2f s\n", now()-t);
  float*f=NULL; long m0=minflt();
  if(how==0) f=(float*)malloc(bytes);
  else { if(posix_memalign((void**)&f,huge,rb)) return 1; int r=madvise(f,rb,how==1?MADV_HUGEPAGE:MADV_NOHUGEPAGE); printf("madvise rc %d\n",r);} 
  if(how==3){ /* populate with MAP_POPULATE-like: madvise WILLNEED does nothing for anon; use MADV_POPULATE_WRITE (23) */ int r=madvise(f,rb,23); printf("populate_write rc %d\n",r);} 
  double t1=now();
#pragma omp parallel for collapse(2) schedule(static)
  for(long z=0;z<n;z++) for(long y=0;y<n;y++){ float*o=f+(z*n+y)*n; float a=sinf(y*0.001f)*sinf(z*0.001f); for(long x=0;x<n;x++) o[x]=a*x;}
  double t2=now(); long m1=minflt();
  printf("how %d fill %.2f s = %.1f GB/s, minflt %ld, AnonHugePages %ld kB, threads %d\n",how,t2-t1,bytes/1e9/(t2-t1),m1-m0,anonhuge(),omp_get_max_threads());
  meminfo("filled");
  t=now(); cudaError_t e=cudaHostRegister(f,bytes,cudaHostRegisterPortable); double t3=now();
  printf("register %s %.2f s, minflt %ld, AnonHugePages %ld kB\n",cudaGetErrorString(e),t3-t,minflt()-m1,anonhuge());
  meminfo("registered");
  t=now(); cudaHostUnregister(f); printf("unregister %.2f s AnonHuge %ld\n",now()-t,anonhuge());
  t=now(); free(f); printf("free %.2f s\n",now()-t); return 0;}

/* Host fill-rate probe (issue 20): a float grid of N^3 (or N^2) allocated
 * three ways (0 malloc, 1 2 MiB-aligned with MADV_HUGEPAGE as
 * pyr_field_create does, 2 the same with MADV_NOHUGEPAGE) and filled by rows
 * as the library's built-in sine (per-axis factors, OpenMP), first touch
 * included; then freed.  Usage: fill_probe N HOW [DIMS]   (DIMS 3 or 2) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <omp.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc,char**argv){
  long n=atol(argv[1]); int how=atoi(argv[2]); int dims=argc>3?atoi(argv[3]):3;
  long nx=n, ny=n, nz=dims==3?n:1; size_t bytes=(size_t)nx*ny*nz*4, huge=2<<20, rb=(bytes+huge-1)/huge*huge;
  double t0=now(); float*f=NULL;
  if(how==0) f=malloc(bytes);
  else if(how==1){ if(posix_memalign((void**)&f,huge,rb)) return 1; madvise(f,rb,MADV_HUGEPAGE);}
  else if(how==2){ if(posix_memalign((void**)&f,huge,rb)) return 1; madvise(f,rb,MADV_NOHUGEPAGE);}
  double *tx=malloc(nx*8),*ty=malloc(ny*8),*tz=malloc(nz*8);
  for (long i = 0; i < nx; i++) tx[i] = sin(M_PI * i / (nx - 1));
  for (long i = 0; i < ny; i++) ty[i] = sin(M_PI * i / (ny - 1));
  for (long i = 0; i < nz; i++) tz[i] = nz > 1 ? sin(M_PI * i / (nz - 1)) : 1.0;
  double t1=now();
#pragma omp parallel for collapse(2) schedule(static)
  for(long z=0;z<nz;z++) for(long y=0;y<ny;y++){ float*o=f+(z*ny+y)*nx; double a=ty[y], b=tz[z]; for(long x=0;x<nx;x++) o[x]=(float)(tx[x]*a*b);}
  double t2=now();
  printf("%s %ldD n=%ld %.1f GB: alloc %.3f s, fill %.2f s = %.1f GB/s (threads %d)\n", how==0?"malloc":how==1?"huge":"nohuge", dims==3?3L:2L, n, bytes/1e9, t1-t0, t2-t1, bytes/1e9/(t2-t1), omp_get_max_threads());
  double t3=now(); free(f); printf("   free %.2f s\n", now()-t3); return 0;}

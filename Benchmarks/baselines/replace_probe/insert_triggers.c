/* Inserts 100,000 rows into Post (the benchmarks' blog table) in 1,000-row transactions through
   SQLite's C API with the SQL files given on the command line applied first; prints the best
   of five, in seconds. Build: cc -O2 insert_triggers.c -lsqlite3 -o insert_triggers.
   Run: ./insert_triggers schema.sql after_insert_log.sql replace_probe_guarded.sql */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static char* slurp(const char*p){FILE*f=fopen(p,"r");if(!f)return strdup("");fseek(f,0,2);long n=ftell(f);fseek(f,0,0);char*b=malloc(n+1);fread(b,1,n,f);b[n]=0;fclose(f);return b;}
int main(int argc,char**argv){
  double best=1e9;
  for(int round=0;round<5;round++){
  remove("bdb");remove("bdb-wal");remove("bdb-shm");
  sqlite3*db;sqlite3_open("bdb",&db);
  char*err=0;
  for(int i=1;i<argc;i++){char*s=slurp(argv[i]); if(sqlite3_exec(db,s,0,0,&err)){fprintf(stderr,"%s: %s\n",argv[i],err);return 1;} free(s);}
  sqlite3_exec(db,"PRAGMA synchronous=NORMAL",0,0,0);
  sqlite3_stmt*st;sqlite3_prepare_v2(db,"INSERT INTO Post(title,content,externalID,createdAt) VALUES(?,?,?,?)",-1,&st,0);
  double t0=now(); char buf[100];
  for(int j=0;j<100000;j+=1000){sqlite3_exec(db,"BEGIN",0,0,0);
    for(int k=j;k<j+1000;k++){snprintf(buf,100,"Title %d",k);sqlite3_bind_text(st,1,buf,-1,SQLITE_TRANSIENT);
      snprintf(buf,100,"Some content of post number %d, a little longer than the title",k);sqlite3_bind_text(st,2,buf,-1,SQLITE_TRANSIENT);
      snprintf(buf,100,"ext-%d",k);sqlite3_bind_text(st,3,buf,-1,SQLITE_TRANSIENT);sqlite3_bind_double(st,4,k*1.5);
      if(sqlite3_step(st)!=SQLITE_DONE){fprintf(stderr,"step %s\n",sqlite3_errmsg(db));return 1;} sqlite3_reset(st);}
    sqlite3_exec(db,"COMMIT",0,0,0);}
  double t=now()-t0; if(t<best)best=t; sqlite3_finalize(st); sqlite3_close(db);}
  printf("%.4f\n",best); return 0;}
